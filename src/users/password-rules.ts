// What every password must meet, whoever sets it (administration API, required action, later
// self-service): the floor the service enforces; realm password policy can only raise it.

export const MIN_PASSWORD_LENGTH = 8;
