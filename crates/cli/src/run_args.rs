//! `ptxvm run` argument specs (RUN-FORMAT.md). (Being written.)
