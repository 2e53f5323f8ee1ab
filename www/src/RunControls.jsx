// The durable session and run log's state for React (src/durable.js does the work).
import { useEffect, useSyncExternalStore } from "react";

export function useDurable(durable) {
	useEffect(() => durable.start(), [durable]);
	return useSyncExternalStore(durable.status.subscribe, durable.status.get, durable.status.get);
}
