import { MetricsPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <MetricsPageSkeleton />;
}
