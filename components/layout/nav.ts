// The console's pages, in navigation order (DESIGN.md "Contracts"), each with its `g` shortcut.
export const consoleNav = [
  { href: "/runs", label: "Runs", key: "r" },
  { href: "/approvals", label: "Approvals", key: "a" },
  { href: "/stacks", label: "Stacks", key: "s" },
  { href: "/triggers", label: "Triggers", key: "t" },
  { href: "/policies", label: "Policies", key: "p" },
  { href: "/metrics", label: "Metrics", key: "m" },
  { href: "/audit", label: "Audit", key: "l" },
  { href: "/deliveries", label: "Deliveries", key: "d" },
  { href: "/settings/repositories", label: "Repositories", key: "o" },
  { href: "/settings", label: "Settings", key: "," },
] as const;

/** Pages outside the main navigation that have a shortcut too. */
export const otherShortcutPages = [{ href: "/notifications", label: "Notifications", key: "n" }] as const;
