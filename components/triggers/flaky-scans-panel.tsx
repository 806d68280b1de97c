"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { toast } from "sonner";
import { useTRPC } from "@/components/providers/trpc";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { Table } from "@/components/ui/table";
import { RelativeTime } from "@/components/ui/time";

// A flaky-scan rule's recent scans: each signature a scan grouped, whether it made a cluster and
// why, and the delivery a cluster was sent as (its triage run, or the duplicate it was dropped
// as, is on the deliveries page). "Scan now" queues a scan at this minute.

export function FlakyScansPanel({ ruleId, canScan }: { ruleId: string; canScan: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const scans = useQuery({ ...trpc.triggers.scans.queryOptions({ ruleId, limit: 10 }), refetchInterval: 5000 });
  const scanNow = useMutation(
    trpc.triggers.scanNow.mutationOptions({
      onSuccess: async () => {
        toast.success("Scan queued: it appears here when the worker has run it");
        await queryClient.invalidateQueries({ queryKey: trpc.triggers.scans.queryKey({ ruleId, limit: 10 }) });
      },
      onError: (err) => toast.error(err.message),
    }),
  );
  return (
    <Card as="section" aria-label="Recent scans" className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h2 className="text-sm font-semibold">Recent scans</h2>
          <p className="text-xs text-zinc-500">What each scan grouped, and which groups were sent as flaky clusters.</p>
        </div>
        {canScan && (
          <Button type="button" onClick={() => scanNow.mutate({ ruleId })} disabled={scanNow.isPending}>
            {scanNow.isPending ? "Queueing…" : "Scan now"}
          </Button>
        )}
      </div>
      {scans.error && <Alert>{scans.error.message}</Alert>}
      {scans.data && scans.data.length === 0 && <p className="text-sm text-zinc-500">No scan yet.</p>}
      {scans.data?.map((scan) => (
        <div key={scan.id} className="space-y-1" data-testid="flaky-scan">
          <p className="text-xs text-zinc-500">
            <RelativeTime date={scan.at} /> · {scan.requestedBy === "schedule" ? "scheduled" : `asked by ${scan.requestedBy}`} · window from <RelativeTime date={scan.windowFrom} />
          </p>
          <Table columns={["Signature", "Failures", "Outcome", "Why"]} framed={false} density="dense" empty="No failed job in the window matched the rule.">
            {scan.groups.map((g) => (
              <tr key={`${g.repository}:${g.signature}`} data-cluster={g.cluster}>
                <td>
                  <span className="font-mono">{g.signature}</span>
                  <span className="block text-zinc-500">
                    {g.repository} · {g.jobName}
                  </span>
                </td>
                <td>
                  {g.occurrences} in {g.pipelines} run{g.pipelines === 1 ? "" : "s"}, {g.passes} passed
                </td>
                <td>
                  {g.cluster ? <Badge tone="warning">flaky cluster</Badge> : <Badge tone="muted">not a cluster</Badge>}
                  {g.deliveryId && (
                    <Link className="block text-indigo-700 hover:underline dark:text-indigo-400" href={`/deliveries?delivery=${encodeURIComponent(g.deliveryId)}`}>
                      its delivery
                    </Link>
                  )}
                </td>
                <td>{g.why}</td>
              </tr>
            ))}
          </Table>
        </div>
      ))}
    </Card>
  );
}
