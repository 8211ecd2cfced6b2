export declare function aptInstall(...packages: string[]): string | undefined;
