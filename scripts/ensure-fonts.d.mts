export declare const FONT_PACKAGES: Record<string, string>;
export declare function ensureFonts(): string | undefined;
