//! Reproductions.
