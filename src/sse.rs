//! Server-Sent Events framing over byte chunks (being written).
