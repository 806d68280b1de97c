import { NextResponse, type NextRequest } from "next/server";

// Passes the requested path to server components (the console layout uses it
// to send a signed-out visitor back after sign-in). No authorisation here:
// every page and procedure checks the session itself.
export function proxy(req: NextRequest) {
  const headers = new Headers(req.headers);
  headers.set("x-airlock-path", req.nextUrl.pathname + req.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = { matcher: ["/((?!api|_next/static|_next/image|favicon.ico).*)"] };
