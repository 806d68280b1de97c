import { GeistMono } from "geist/font/mono";
import { GeistSans } from "geist/font/sans";
import type { Metadata } from "next";
import { ThemedToaster } from "@/components/providers/theme";
import { themeScript } from "@/components/providers/theme-script";
import { TRPCReactProvider } from "@/components/providers/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Airlock", template: "%s · Airlock" },
  description: "Agent CI runs: dispatch, watch, approve every write-back.",
};

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
