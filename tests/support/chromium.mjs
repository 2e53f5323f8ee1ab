// How every test, benchmark and script here launches Debian's Chromium: never a
// downloaded browser, and the flags it needs as root on a machine whose only
// network is loopback.
export const CHROMIUM_PATH = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
	"--no-sandbox",
	"--headless=new",
	"--disable-gpu",
	"--disable-dev-shm-usage",
	"--disable-background-networking",
	"--disable-component-update",
	"--no-first-run",
	"--disable-sync",
];

/** Launches that Chromium through playwright-core (loaded on first use), with `args` added to the flags above. */
export async function launchChromium({ args = [], timeout = 60_000 } = {}) {
	const { chromium } = await import("playwright-core");
	return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...args], timeout });
}
