import { ListPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <ListPageSkeleton label="Loading policies" filters={0} columns={5} />;
}
