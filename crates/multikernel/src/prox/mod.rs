//! Regularizers.
