import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export type HttpResult = APIGatewayProxyStructuredResultV2;

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

export const errorBody = (code: number, message: string) => ({ code, message, result: false });

export function redirect(location: string): HttpResult {
  return { statusCode: 302, headers: { location, 'cache-control': 'no-store' }, body: '' };
}
