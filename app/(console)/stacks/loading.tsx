import { ListPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <ListPageSkeleton label="Loading stacks" filters={2} columns={6} />;
}
