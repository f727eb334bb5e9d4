export interface PresetGeneratorSchema {
  name: string;
  operator?: string;
  description?: string;
  skipInstall?: boolean;
}
