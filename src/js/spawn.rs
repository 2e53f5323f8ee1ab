//! The one place futures are handed to the JS event loop: a small executor.
//!
//! It schedules as wasm-bindgen-futures' `spawn_local` does (a spawned or woken
//! task is queued; one `queueMicrotask` callback runs the tasks queued before it
//! started, in order; tasks woken meanwhile wait for the next one), except that
//! a task woken by a settled promise goes on in that promise's reaction, as an
//! `await` does (`resume`). Its own copy is smaller: tasks live in a slab and
//! a waker is the task's number, with no reference count and no JSPI support.

use crate::prelude::*;
use alloc::collections::VecDeque;
use core::cell::RefCell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, RawWaker, RawWakerVTable, Waker};
use js_sys::{Array, Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// `[promise, resolve, reject]`.
    pub fn deferred() -> Array;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = queueMicrotask)]
    fn queue_microtask(callback: &Function);
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

struct Task {
    /// Taken out while it is polled.
    future: Option<BoxFuture<'static, ()>>,
    /// In the run queue already: a wake-up adds nothing.
    queued: bool,
}

#[derive(Default)]
struct Executor {
    /// Tasks by number; `None` once finished. A number is reused once no queue
    /// entry refers to it; a stale waker may still poll a later task once more
    /// than needed, which futures allow.
    tasks: Vec<Option<Task>>,
    free: Vec<u32>,
    queue: VecDeque<u32>,
    /// A microtask will run the queue.
    scheduled: bool,
}

crate::local::local! {
    static EXECUTOR: RefCell<Executor> = RefCell::new(Executor::default());
    static RUNNER: RefCell<Option<Closure<dyn FnMut()>>> = const { RefCell::new(None) };
}

/// Queues task `id` and makes sure a microtask will run the queue.
fn enqueue(ex: &mut Executor, id: u32) {
    ex.queue.push_back(id);
    if !ex.scheduled {
        ex.scheduled = true;
        RUNNER.with(|r| {
            let mut r = r.borrow_mut();
            let runner = r.get_or_insert_with(|| Closure::new(run_queue));
            queue_microtask(runner.as_ref().unchecked_ref());
        });
    }
}

fn wake(id: u32) {
    EXECUTOR.with(|ex| {
        let mut ex = ex.borrow_mut();
        let queue = match ex.tasks.get_mut(id as usize) {
            Some(Some(task)) => !core::mem::replace(&mut task.queued, true),
            _ => false,
        };
        if queue {
            enqueue(&mut ex, id);
        }
    });
}

/// Runs the tasks queued before this microtask, in order.
fn run_queue() {
    let count = EXECUTOR.with(|ex| {
        let mut ex = ex.borrow_mut();
        ex.scheduled = false;
        ex.queue.len()
    });
    for _ in 0..count {
        let Some((id, future)) = EXECUTOR.with(|ex| {
            let mut ex = ex.borrow_mut();
            let id = ex.queue.pop_front()?;
            let future = match ex.tasks.get_mut(id as usize) {
                Some(Some(task)) => {
                    task.queued = false;
                    task.future.take()
                }
                // Finished while queued: its number is free only now.
                _ => {
                    ex.free.push(id);
                    None
                }
            };
            Some((id, future))
        }) else {
            break;
        };
        if let Some(future) = future {
            poll_task(id, future);
        }
    }
}

/// Polls task `id`, whose future was taken out of its slot, and puts it back
/// unless it finished.
fn poll_task(id: u32, mut future: BoxFuture<'static, ()>) {
    // Polled outside the borrow: the poll may spawn or wake tasks.
    let done = future
        .as_mut()
        .poll(&mut Context::from_waker(&waker(id)))
        .is_ready();
    let keep = if done {
        drop(future);
        None
    } else {
        Some(future)
    };
    EXECUTOR.with(|ex| {
        let mut ex = ex.borrow_mut();
        match keep {
            Some(future) => {
                if let Some(Some(task)) = ex.tasks.get_mut(id as usize) {
                    task.future = Some(future);
                }
            }
            None => {
                let queued = match ex.tasks.get_mut(id as usize) {
                    Some(slot) => slot.take().is_some_and(|task| task.queued),
                    None => true,
                };
                if !queued {
                    ex.free.push(id);
                }
            }
        }
    });
}

/// Wakes a task from inside a promise reaction (settle.rs): the task goes on
/// at once, in that reaction's microtask, as an `await` of the promise would,
/// instead of a microtask later. A task already queued, or being polled (the
/// reaction cannot run inside a poll, but nothing depends on that), is woken
/// as usual, and so is a waker that is not one of this executor's.
pub fn resume(waker: Waker) {
    if waker.vtable() != &VTABLE {
        return waker.wake();
    }
    let id = waker.data() as usize as u32;
    let future = EXECUTOR.with(|ex| match ex.borrow_mut().tasks.get_mut(id as usize) {
        Some(Some(task)) if !task.queued => task.future.take(),
        _ => None,
    });
    match future {
        Some(future) => poll_task(id, future),
        None => waker.wake(),
    }
}

fn waker(id: u32) -> Waker {
    // SAFETY: the data pointer is the task's number, never dereferenced; every
    // vtable function only reads that number, so any copy stays valid.
    unsafe { Waker::from_raw(raw_waker(id as usize as *const ())) }
}

fn raw_waker(data: *const ()) -> RawWaker {
    RawWaker::new(data, &VTABLE)
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(
    raw_waker,
    |data| wake(data as usize as u32),
    |data| wake(data as usize as u32),
    |_| {},
);

/// Runs `future` to completion on the JS microtask queue; its first poll is in
/// a microtask, as with `spawn_local`.
#[inline(never)]
pub fn spawn(future: BoxFuture<'static, ()>) {
    EXECUTOR.with(|ex| {
        let mut ex = ex.borrow_mut();
        let task = Task {
            future: Some(future),
            queued: true,
        };
        let id = match ex.free.pop() {
            Some(id) => {
                if let Some(slot) = ex.tasks.get_mut(id as usize) {
                    *slot = Some(task);
                }
                id
            }
            None => {
                ex.tasks.push(Some(task));
                (ex.tasks.len() - 1) as u32
            }
        };
        enqueue(&mut ex, id);
    });
}

/// A promise settled by `future`: resolved with `Ok`, rejected with `Err`.
#[inline(never)]
pub fn promise(future: BoxFuture<'static, Result<JsValue, JsValue>>) -> Promise {
    // As `future_to_promise` does (the future first runs in a microtask), but
    // through `spawn`'s one task type and without a Rust closure for the executor.
    let parts = deferred();
    let (resolve, reject) = (parts.get(1), parts.get(2));
    spawn(Box::pin(async move {
        let (settle, value) = match future.await {
            Ok(value) => (resolve, value),
            Err(error) => (reject, error),
        };
        let _ = settle
            .unchecked_ref::<Function>()
            .call1(&JsValue::UNDEFINED, &value);
    }));
    parts.get(0).unchecked_into()
}
