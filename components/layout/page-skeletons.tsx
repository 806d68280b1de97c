import { Card } from "@/components/ui/card";
import { LoadingRegion, Skeleton, SkeletonField, SkeletonLines, SkeletonTable } from "@/components/ui/skeleton";

// The shapes a page takes while it loads: the route's loading.tsx and a component whose query
// is still pending show the same skeleton, so nothing jumps when the data arrives.

function TitleBlock() {
  return (
    <div className="space-y-2">
      <Skeleton className="h-6 w-48" />
      <Skeleton className="h-3.5 w-96 max-w-full" />
    </div>
  );
}

/** A list page: title, a row of filters, a table. */
export function ListPageSkeleton({ label, filters = 3, columns = 5 }: { label: string; filters?: number; columns?: number }) {
  return (
    <LoadingRegion label={label} className="space-y-4">
      <TitleBlock />
      {filters > 0 && (
        <div className="flex flex-wrap gap-2">
          {Array.from({ length: filters }, (_, i) => (
            <Skeleton key={i} className="h-8 w-40" />
          ))}
        </div>
      )}
      <SkeletonTable columns={columns} />
    </LoadingRegion>
  );
}

/** A detail or form page: breadcrumb, title, then panels. */
export function DetailPageSkeleton({ label, panels = 2 }: { label: string; panels?: number }) {
  return (
    <LoadingRegion label={label} className="space-y-4">
      <Skeleton className="h-3.5 w-40" />
      <TitleBlock />
      {Array.from({ length: panels }, (_, i) => (
        <Card key={i} className="space-y-3">
          <Skeleton className="h-4 w-32" />
          <SkeletonLines lines={4} />
        </Card>
      ))}
    </LoadingRegion>
  );
}

/** The metrics page's figures. */
export function MetricsSkeleton() {
  return (
    <LoadingRegion label="Loading the metrics" className="grid grid-cols-2 gap-3 md:grid-cols-4">
      {Array.from({ length: 8 }, (_, i) => (
        <Card key={i}>
          <SkeletonField size="lg" />
        </Card>
      ))}
    </LoadingRegion>
  );
}

export function MetricsPageSkeleton() {
  return (
    <div className="space-y-6">
      <TitleBlock />
      <MetricsSkeleton />
    </div>
  );
}

/** The run page: header, context | transcript | details. */
export function RunPageSkeleton({ label = "Loading the run" }: { label?: string }) {
  return (
    <LoadingRegion label={label} className="flex flex-col gap-3">
      <Skeleton className="h-3.5 w-40" />
      <Skeleton className="h-7 w-96 max-w-full" />
      <Card padding="sm" className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6">
        {Array.from({ length: 12 }, (_, i) => (
          <SkeletonField key={i} />
        ))}
      </Card>
      <div className="grid grid-cols-1 gap-3 lg:grid-cols-[280px_minmax(0,1fr)_300px]">
        <Card padding="sm">
          <SkeletonLines lines={6} />
        </Card>
        <Card padding="none">
          <TranscriptSkeleton />
        </Card>
        <Card padding="sm">
          <SkeletonLines lines={6} />
        </Card>
      </div>
    </LoadingRegion>
  );
}

/** Transcript rows, for inside the transcript's card. */
export function TranscriptSkeleton() {
  return (
    <div className="space-y-3 p-3">
      {Array.from({ length: 10 }, (_, i) => (
        <div key={i} className="flex gap-3">
          <Skeleton className="h-3.5 w-8" />
          <Skeleton className="h-3.5 flex-1" />
          <Skeleton className="h-3.5 w-14" />
        </div>
      ))}
    </div>
  );
}
