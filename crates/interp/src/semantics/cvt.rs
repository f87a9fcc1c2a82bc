//! cvt
