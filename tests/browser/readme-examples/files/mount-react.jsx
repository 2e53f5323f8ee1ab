// Renders the README's React component (the capitalised function its example declares) with `props`.
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import * as example from "./example.jsx";

const [, Component] = Object.entries(example).find(([name, value]) => /^[A-Z]/.test(name) && typeof value === "function");
export function mount(target, props) {
  const root = createRoot(target);
  root.render(createElement(Component, props));
  return root;
}
export const unmount = (root) => root.unmount();
