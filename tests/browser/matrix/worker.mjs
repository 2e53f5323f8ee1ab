// The worker of the matrix's WorkerAgent: the matrix's model (tools and hooks are the page's).
import { serveAgent } from "/pkg/worker/host.js";
import { streamFn } from "./model.mjs";

serveAgent({ streamFn });
