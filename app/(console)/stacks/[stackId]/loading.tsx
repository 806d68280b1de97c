import { DetailPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <DetailPageSkeleton label="Loading the stack" panels={3} />;
}
