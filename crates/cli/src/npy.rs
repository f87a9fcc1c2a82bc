//! NumPy `.npy` reading and writing. (Being written.)
