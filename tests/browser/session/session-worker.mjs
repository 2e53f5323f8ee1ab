// The worker of the page's WorkerAgent: the scripted stream function (tools and hooks are the page's).
import { serveAgent } from "/pkg/worker/host.js";
import { streamFn } from "./stream.mjs";

serveAgent({ streamFn });
