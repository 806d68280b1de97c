import { RouteNotFound } from "@/components/layout/route-states";

// Rendered for an address no route matches ([...missing]) and for a record a page cannot find.
export default function ConsoleNotFound() {
  return <RouteNotFound />;
}
