/**
 * plens's own few-shot examples for the two stages whose released output leaves out what the
 * prompt asks for (the situations' justifications; the consistency check's verdicts, which the
 * release does not publish). Written by us for plens: two people, made up.
 */
import type { ConsistencyExample, SituationsExample } from './prompts.js';

const person = (user_id: string, o: Partial<Record<string, string>>) =>
  ({
    user_id,
    age: 'N/A',
    gender: 'N/A',
    employment_status: 'N/A',
    education: 'N/A',
    marital_status: 'N/A',
    english_proficiency: 'N/A',
    ethnicity: 'N/A',
    religion: 'N/A',
    birth_country: 'N/A',
    reside_country: 'N/A',
    ...o,
  }) as SituationsExample['demographics'];

const nurse = person('example-a', {
  age: '25-34 years old',
  gender: 'Female',
  employment_status: 'Working full-time',
  education: 'University Bachelors Degree',
  marital_status: 'Married',
  english_proficiency: 'Fluent',
  birth_country: 'Portugal',
  reside_country: 'United Kingdom',
});
const retiree = person('example-b', {
  age: '65+ years old',
  gender: 'Male',
  employment_status: 'Retired',
  education: 'Some Secondary',
  marital_status: 'Widowed',
  english_proficiency: 'Native speaker',
  birth_country: 'United States',
  reside_country: 'United States',
});

export const SITUATION_EXAMPLES: SituationsExample[] = [
  {
    demographics: nurse,
    preferences: { Alarm: { 'Alarm Time Preference': '5:30 AM', 'Alarm Sound Preference': 'gradual increase' } },
    task: 'The user wants to set an alarm for an early hospital shift tomorrow.',
    output: {
      values: { Location: 'Manchester, United Kingdom', Device: 'Smartphone', 'Time of Day': 'Night', 'Day of the Week': 'Tuesday', Environment: 'Quiet' },
      justifications: {
        Location: 'She lives and works in Manchester.',
        Device: 'She sets alarms on the phone she keeps by her bed.',
        'Time of Day': 'She prepares for an early shift just before going to sleep.',
        'Day of the Week': 'Her rota puts her on the ward on Wednesday mornings.',
        Environment: 'Her household is asleep by then.',
      },
    },
  },
  {
    demographics: retiree,
    preferences: { Restaurants: { 'Cuisine Preference': ['Italian', 'Seafood'], 'Price Range': '$$' } },
    task: 'The user wants to book a table for a family lunch this weekend.',
    output: {
      values: { Location: 'Portland, United States', Device: 'Smart speaker', 'Time of Day': 'Morning', 'Day of the Week': 'Friday', Environment: 'Noisy' },
      justifications: {
        Location: 'He has lived in Portland for decades.',
        Device: 'He finds talking to the kitchen speaker easier than typing.',
        'Time of Day': 'He plans the day over breakfast.',
        'Day of the Week': 'He books a day ahead of the weekend.',
        Environment: 'The radio and the kettle are going in the kitchen.',
      },
    },
  },
];

export const CONSISTENCY_EXAMPLES: ConsistencyExample[] = [
  {
    demographics: nurse,
    preferences: {
      Restaurants: { 'Dietary Restrictions': ['Vegetarian'], 'Cuisine Preference': ['Indian', 'Steakhouse'] },
      Music: { Genre: ['Fado', 'Indie'] },
    },
    output: {
      domains: {
        Restaurants: { label: 1, explanation: 'A vegetarian whose favourite kind of restaurant is a steakhouse is a contradiction within the domain.' },
        Music: { label: 0, explanation: 'Fado and indie sit well together and with her Portuguese background.' },
      },
      cross_domain: { label: 0, explanation: 'Nothing in one domain conflicts with the other.' },
    },
  },
  {
    demographics: retiree,
    preferences: {
      Flights: { 'Seat Preference': 'Aisle', 'Class Preference': 'Economy' },
      Hotels: { 'Budget Preference': 'Luxury', Amenities: ['Pool'] },
    },
    output: {
      domains: {
        Flights: { label: 0, explanation: 'An aisle seat in economy is a common, coherent choice.' },
        Hotels: { label: 0, explanation: 'A luxury hotel with a pool is coherent.' },
      },
      cross_domain: { label: 0, explanation: 'Economy flights and luxury hotels can go together for someone saving on one to spend on the other.' },
    },
  },
];
