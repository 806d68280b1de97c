import { DetailPageSkeleton } from "@/components/layout/page-skeletons";

export default function Loading() {
  return <DetailPageSkeleton label="Loading settings" panels={2} />;
}
