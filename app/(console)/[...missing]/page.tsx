import { notFound } from "next/navigation";

// Any address no console route matches: behind the session gate, inside the shell, the not-found page.
export default function MissingPage() {
  notFound();
}
