import { ListPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <ListPageSkeleton label="Loading the audit log" filters={2} columns={5} />;
}
