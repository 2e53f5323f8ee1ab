//! `thread_local!` for this `no_std` crate, with std's syntax and `with`.
//!
//! Where std is linked (native tests and fuzzing, whose test threads each need
//! their own values, and the wasm test harness) it is std's macro. In the
//! shipped wasm it is a lazily initialised static, as std's own
//! `thread_local!` is on a target without threads.

#[cfg(any(not(target_arch = "wasm32"), feature = "std"))]
pub(crate) use std::thread_local as local;

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
mod single {
    use core::cell::OnceCell;

    #[cfg(target_feature = "atomics")]
    compile_error!("src/local.rs assumes a wasm without threads");

    /// A static value, built on first use.
    pub struct Local<T: 'static> {
        value: OnceCell<T>,
        init: fn() -> T,
    }

    // SAFETY: wasm32 without the atomics feature runs one thread, so a value is
    // never reached from two threads (std's no-threads `thread_local!` relies
    // on the same).
    unsafe impl<T> Sync for Local<T> {}

    impl<T> Local<T> {
        pub const fn new(init: fn() -> T) -> Self {
            Local {
                value: OnceCell::new(),
                init,
            }
        }
        pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
            f(self.value.get_or_init(self.init))
        }
    }

    macro_rules! local {
        () => {};
        ($(#[$attr:meta])* static $name:ident: $t:ty = const { $init:expr }; $($rest:tt)*) => {
            $crate::local::local!($(#[$attr])* static $name: $t = $init; $($rest)*);
        };
        ($(#[$attr:meta])* static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => {
            $(#[$attr])*
            static $name: $crate::local::Local<$t> = $crate::local::Local::new(|| $init);
            $crate::local::local!($($rest)*);
        };
    }
    pub(crate) use local;
}

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
pub(crate) use single::{local, Local};
