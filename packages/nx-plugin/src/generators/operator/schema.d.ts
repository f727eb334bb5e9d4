export interface OperatorGeneratorSchema {
  name: string;
  description?: string;
  skipTasks?: boolean;
}
