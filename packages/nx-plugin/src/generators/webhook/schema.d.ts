export interface WebhookGeneratorSchema {
  operator: string;
  kind: string;
  validating?: boolean;
  mutating?: boolean;
  conversion?: boolean;
  skipTasks?: boolean;
}
