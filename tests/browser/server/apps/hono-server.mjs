// The test app on Hono (Node adapter): PORT on 127.0.0.1. The handlers take Hono's Request as it is.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { proxy, sessions } from "./endpoints.mjs";
import { staticFile } from "./static.mjs";

const app = new Hono();
app.post("/api/stream", (c) => proxy(c.req.raw));
app.all("/api/sessions/:id", (c) => sessions(c.req.raw));
app.get("*", async (c) => {
	const file = await staticFile(c.req.path);
	return file ? new Response(file.data, { headers: { "content-type": file.type } }) : c.notFound();
});
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" }, (info) => console.log(`listening on ${info.port}`));
