import { ListPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <ListPageSkeleton label="Loading approvals" filters={4} columns={6} />;
}
