"use client";

import { useId, useState } from "react";
import { createPortal } from "react-dom";

// A tooltip on hover and keyboard focus. It is drawn in the body at a fixed position, so a
// card's overflow or a virtualised list's transform never clips or displaces it, and only
// exists while shown (nothing for server HTML to disagree about).

type Place = { top: number; left: number; below: boolean };

export function Tooltip({ content, children, className }: { content: React.ReactNode; children: React.ReactNode; className?: string }) {
  const id = useId();
  const [place, setPlace] = useState<Place | null>(null);
  const show = (e: React.SyntheticEvent<HTMLSpanElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const below = r.top < 48;
    setPlace({ top: below ? r.bottom + 6 : r.top - 6, left: r.left + r.width / 2, below });
  };
  const hide = () => setPlace(null);
  return (
    <span
      className={className}
      aria-describedby={place ? id : undefined}
      onPointerEnter={show}
      onPointerLeave={hide}
      onFocus={show}
      onBlur={hide}
      onKeyDown={(e) => e.key === "Escape" && hide()}
    >
      {children}
      {place &&
        createPortal(
          <span
            id={id}
            role="tooltip"
            style={{ top: place.top, left: place.left }}
            className={`pointer-events-none fixed z-50 w-max max-w-72 -translate-x-1/2 rounded-md bg-zinc-900 px-2 py-1 text-xs font-normal text-white normal-case shadow-lg dark:bg-zinc-100 dark:text-zinc-900 ${place.below ? "" : "-translate-y-full"}`}
          >
            {content}
          </span>,
          document.body,
        )}
    </span>
  );
}
