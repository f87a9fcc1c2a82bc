//! CUDA device `printf` (`vprintf`) formatting. (Being written.)
