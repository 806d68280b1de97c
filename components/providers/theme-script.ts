// The theme (system, light or dark) is chosen in the header and kept in localStorage. This script
// runs in <head> before the first paint, so a page never flashes the other theme: it sets the
// `dark` class the `dark:` variant reads, `data-theme` with the choice, and the color scheme of
// native controls. components/providers/theme.tsx keeps them current afterwards.

export const THEME_STORAGE_KEY = "airlock-theme";

export const themeChoices = ["system", "light", "dark"] as const;
export type ThemeChoice = (typeof themeChoices)[number];

/** Plain ES5 inside a string: it runs before any bundle loads. A storage failure leaves the OS's scheme. */
export const themeScript = `(function(){try{var c=localStorage.getItem(${JSON.stringify(THEME_STORAGE_KEY)});if(c!=="light"&&c!=="dark")c="system";var d=c==="dark"||(c==="system"&&window.matchMedia("(prefers-color-scheme: dark)").matches);var e=document.documentElement;e.classList.toggle("dark",d);e.dataset.theme=c;e.style.colorScheme=d?"dark":"light"}catch(_){}})();`;
