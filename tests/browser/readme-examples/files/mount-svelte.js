// Mounts the README's Svelte component.
import { mount as svelteMount, unmount as svelteUnmount } from "svelte";
import Example from "./Example.svelte";

export const mount = (target) => svelteMount(Example, { target });
export const unmount = (component) => svelteUnmount(component);
