import { RunPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <RunPageSkeleton />;
}
