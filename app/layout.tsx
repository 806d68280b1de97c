import { GeistMono } from "geist/font/mono";
import { GeistSans } from "geist/font/sans";
import type { Metadata, Viewport } from "next";
import { Toaster } from "sonner";
import { TRPCReactProvider } from "@/components/providers/trpc";
import "./globals.css";

// The files are in public/ (written by scripts/icons.mjs); next.config.ts sets their caching.
export const metadata: Metadata = {
  title: { default: "Airlock", template: "%s · Airlock" },
  description: "Agent CI runs: dispatch, watch, approve every write-back.",
  applicationName: "Airlock",
  manifest: "/manifest.webmanifest",
  icons: {
    icon: [
      { url: "/favicon.ico", sizes: "16x16 32x32 48x48" },
      { url: "/icon.svg", type: "image/svg+xml" },
    ],
    apple: { url: "/apple-touch-icon.png", sizes: "180x180" },
  },
};

export const viewport: Viewport = { themeColor: "#4f46e5" };

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
