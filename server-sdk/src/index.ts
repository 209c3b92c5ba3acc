export * from './webhooks.ts'
