// The API's path prefix (spec §9: the version is part of it).
export const API_PREFIX = '/api/v1/billing'
