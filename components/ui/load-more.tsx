"use client";

import { Loader2 } from "lucide-react";
import { Button } from "./button";

// "Load more" under an infinite list: busy (spinner, aria-busy) while the next page loads.

type Pages = { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };

export function LoadMore({ query }: { query: Pages }) {
  if (!query.hasNextPage) return null;
  return (
    <div className="flex justify-center">
      <Button onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage} aria-busy={query.isFetchingNextPage || undefined}>
        {query.isFetchingNextPage && <Loader2 aria-hidden className="size-4 animate-spin" />}
        Load more
      </Button>
    </div>
  );
}
