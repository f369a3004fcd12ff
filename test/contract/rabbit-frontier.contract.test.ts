import { makeRabbitFixture } from '../helpers/rabbit-frontier-fixture.js';
import { frontierContract } from './frontier.contract.js';

// Needs RabbitMQ (bash scripts/services.sh up); every case fails, never skips, without it.
frontierContract('rabbitmq', ({ clock }) => makeRabbitFixture(clock));
