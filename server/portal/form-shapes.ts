/**
 * The shapes of a new card and a new bank account, checked by the document's own schemas
 * (CardInput, AchInput of the Portal document): a form post does not pass the document's
 * validator, and the rules must not be written a second time. Answers the names of the fields
 * that break them; the form words each for a person.
 */
import Ajv2020 from 'ajv/dist/2020';
import { loadPortalDocument } from '../http/validator';

type Shape = 'CardInput' | 'AchInput';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
ajv.addSchema(loadPortalDocument(), 'portal');
const validators = new Map<Shape, ReturnType<Ajv2020['compile']>>();

/** The properties of `value` that break the document's schema `shape`. */
export function brokenFields(shape: Shape, value: object): string[] {
  let validate = validators.get(shape);
  if (!validate) {
    validate = ajv.compile({ $ref: `portal#/components/schemas/${shape}` });
    validators.set(shape, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => (error.instancePath ? error.instancePath.slice(1).split('/')[0]! : String(error.params.missingProperty ?? '')));
}
