"use client";

import { useEffect, useRef } from "react";
import { cn } from "./cn";

/**
 * A modal on the native <dialog>: focus trap, Escape and the top layer come
 * from the browser. `open` drives showModal()/close().
 */
export function Dialog(props: {
  open: boolean;
  onClose: () => void;
  title: string;
  children: React.ReactNode;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const { open, onClose } = props;
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (open && !el.open) el.showModal();
    if (!open && el.open) el.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-label={props.title}
      onClose={onClose}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      className={cn(
        "m-auto w-full max-w-lg rounded-lg border border-zinc-200 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-black/40 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100",
        props.className,
      )}
    >
      {open && (
        <div className="p-4">
          <h2 className="mb-3 text-base font-semibold">{props.title}</h2>
          {props.children}
        </div>
      )}
    </dialog>
  );
}
