import { ListPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <ListPageSkeleton label="Loading notifications" filters={1} columns={3} />;
}
