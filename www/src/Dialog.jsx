// A modal dialog on the native <dialog> element: showModal() makes the page behind it inert, Tab and
// Shift+Tab cycle through the dialog's own controls, Escape calls `onCancel`, and when it closes, focus goes
// back to where it was when it opened (or to `returnFocus()` when that element is gone).
import { useEffect, useRef } from "react";

const FOCUSABLE = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

export function Modal({ labelledBy, describedBy, onCancel, initialFocus, returnFocus, testId, className = "", children }) {
	const ref = useRef(null);
	const cancel = useRef(onCancel);
	cancel.current = onCancel;
	useEffect(() => {
		const dialog = ref.current;
		const opener = document.activeElement;
		if (!dialog.open) dialog.showModal();
		(initialFocus?.current ?? dialog.querySelector(FOCUSABLE))?.focus();
		return () => {
			if (dialog.open) dialog.close();
			// After React removed the dialog: the opener if it is still in the page.
			queueMicrotask(() => {
				const target = opener instanceof HTMLElement && opener.isConnected && opener !== document.body ? opener : returnFocus?.();
				target?.focus();
			});
		};
		// Opened once per mount.
		// eslint-disable-next-line react-hooks/exhaustive-deps
	}, []);
	const onKeyDown = (e) => {
		if (e.key !== "Tab") return;
		const items = [...ref.current.querySelectorAll(FOCUSABLE)].filter((el) => el.offsetParent !== null || el === document.activeElement);
		if (items.length === 0) return;
		const first = items[0];
		const last = items[items.length - 1];
		if (e.shiftKey && document.activeElement === first) {
			e.preventDefault();
			last.focus();
		} else if (!e.shiftKey && document.activeElement === last) {
			e.preventDefault();
			first.focus();
		}
	};
	return (
		<dialog
			ref={ref}
			className={`dialog ${className}`}
			aria-labelledby={labelledBy}
			aria-describedby={describedBy}
			data-testid={testId}
			onKeyDown={onKeyDown}
			onCancel={(e) => {
				// Escape: the caller decides (the dialog closes when the caller unmounts it).
				e.preventDefault();
				cancel.current?.();
			}}
		>
			{children}
		</dialog>
	);
}
