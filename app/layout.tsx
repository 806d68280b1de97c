import { GeistMono } from "geist/font/mono";
import { GeistSans } from "geist/font/sans";
import type { Metadata, Viewport } from "next";
import { ThemedToaster } from "@/components/providers/theme";
import { themeScript } from "@/components/providers/theme-script";
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
    // The theme script sets <html>'s class and data-theme before the first paint (no flash).
    <html lang="en" className={`${GeistSans.variable} ${GeistMono.variable}`} suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: themeScript }} />
      </head>
      <body className="min-h-screen font-sans">
        <TRPCReactProvider>{children}</TRPCReactProvider>
        <ThemedToaster />
      </body>
    </html>
  );
}
