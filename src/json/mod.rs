//! Pure JSON machinery: a small value type, the incremental partial-JSON parser
//! used while tool-call arguments stream, a strict parser for JSON text, and tool-argument validation with the
//! reference's coercion rules. Nothing here touches JavaScript.

pub mod num;
pub mod partial;
pub mod schema;
pub mod text;
pub mod value;

pub use schema::{Host, RustHost};
pub use value::{Map, Value};
