//! What std's prelude gives a module, for this `no_std` crate (see lib.rs):
//! `use crate::prelude::*;` where a module needs it.

pub use alloc::borrow::ToOwned;
pub use alloc::boxed::Box;
pub use alloc::string::{String, ToString};
pub use alloc::vec::Vec;
pub use alloc::{format, vec};
