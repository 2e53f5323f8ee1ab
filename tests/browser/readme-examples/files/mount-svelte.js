// Mounts the README's Svelte component with `props`.
import { mount as svelteMount, unmount as svelteUnmount } from "svelte";
import Example from "./Example.svelte";

export const mount = (target, props = {}) => svelteMount(Example, { target, props });
export const unmount = (component) => svelteUnmount(component);
