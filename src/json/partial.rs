//! Incremental partial-JSON parser (being written).
