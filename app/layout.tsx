import { GeistMono } from "geist/font/mono";
import { GeistSans } from "geist/font/sans";
import type { Metadata } from "next";
import { Toaster } from "sonner";
import { TRPCReactProvider } from "@/components/providers/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Airlock", template: "%s · Airlock" },
  description: "Agent CI runs: dispatch, watch, approve every write-back.",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en" className={`${GeistSans.variable} ${GeistMono.variable}`}>
      <body className="min-h-screen font-sans">
        <TRPCReactProvider>{children}</TRPCReactProvider>
        <Toaster richColors closeButton position="bottom-right" />
      </body>
    </html>
  );
}
