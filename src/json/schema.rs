//! Tool-argument validation and coercion (being written).
